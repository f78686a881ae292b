"""What a release says about itself: the typed reports (:mod:`.report`,
:mod:`.key_reports`), the report written beside the release (:mod:`.sidecar`) and who may
see each of its figures (:mod:`.disclosure`)."""
