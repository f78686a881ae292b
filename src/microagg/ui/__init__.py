"""The web application (``microagg ui``): a table loaded, its roles set, its risk measured,
protection steps added, run and undone, methods compared at equal risk, and the release, its
report and the recipe downloaded. Needs the extra ``ui`` (Shiny for Python); the modules are
imported by ``microagg ui`` only."""
