# sdcMicro's local suppression (localSuppression, the data.frame method, alpha = 1: a missing
# value matches any value) on one table, for reproduction/sdcmicro_suppress.py.
#
# Usage: Rscript reproduction/sdcmicro_suppress.R DATA K OUT_PREFIX
#   DATA: "testdata" (sdcMicro's testdata; keys urbrur, roof, walls, water, electcon, relat,
#         sex) or the path of UCI Adult's adult.csv (keys age, workclass, education,
#         marital-status, race, sex, native-country; "?" is a missing value)
#   K:    the k of k-anonymity
# Writes OUT_PREFIX.input.csv (the keys as given to sdcMicro, testdata only),
# OUT_PREFIX.sdcmicro.csv (the keys after suppression) and OUT_PREFIX.sdcmicro.json (the
# seconds localSuppression took, the suppressions per key, and the smallest f_k of the
# result by sdcMicro's own freqCalc).
suppressMessages({
  library(sdcMicro)
  library(jsonlite)
})
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 3) stop("usage: sdcmicro_suppress.R DATA K OUT_PREFIX")
k <- as.integer(args[2])
prefix <- args[3]
if (args[1] == "testdata") {
  data(testdata, package = "sdcMicro", envir = environment())
  keys <- c("urbrur", "roof", "walls", "water", "electcon", "relat", "sex")
  x <- testdata[, c(keys, "sampling_weight", "ori_hid")]
  write.csv(x, paste0(prefix, ".input.csv"), row.names = FALSE, na = "")
  x <- x[, keys]
} else {
  adult <- read.csv(args[1], na.strings = c("", "?"), check.names = FALSE,
                    stringsAsFactors = TRUE)
  keys <- c("age", "workclass", "education", "marital-status", "race", "sex",
            "native-country")
  x <- adult[, keys]
}
names(x) <- make.names(keys)  # sdcMicro builds R expressions from the names
started <- Sys.time()
result <- localSuppression(x, keyVars = seq_along(keys), k = k)
seconds <- as.numeric(difftime(Sys.time(), started, units = "secs"))
anonymized <- result$xAnon
names(anonymized) <- keys
frequencies <- freqCalc(result$xAnon, keyVars = seq_along(keys), alpha = 1)
write.csv(anonymized, paste0(prefix, ".sdcmicro.csv"), row.names = FALSE, na = "")
supps <- as.list(unlist(result$supps[1, ]))
names(supps) <- keys
writeLines(toJSON(list(
  sdcmicro = as.character(packageVersion("sdcMicro")), k = k, keys = keys,
  seconds = seconds, suppressions = supps, total = sum(unlist(supps)),
  smallest_fk = min(frequencies$fk)
), auto_unbox = TRUE, digits = NA), paste0(prefix, ".sdcmicro.json"))
