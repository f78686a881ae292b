# The risk measures of categorical keys as sdcMicro computes them, written for
# reproduction/sdcmicro_risk.py to compare with microagg's.
#
# Usage: Rscript reproduction/sdcmicro_risk.R DATA OUT KEYS [WEIGHT] [HOUSEHOLD] [SENSITIVE]
#   DATA       "testdata" (sdcMicro's data set, also written to OUT/data.csv) or a CSV file
#              ("?" and empty fields read as missing)
#   OUT        a folder: records.csv (one row per record, in input order), summary.csv
#              (name, value), data.csv and codes.csv (the key codes suda2's C++ reads:
#              factor codes, -999 for a missing value)
#   KEYS       key variables, comma-separated; WEIGHT, HOUSEHOLD: a column or "-";
#   SENSITIVE  columns for l-diversity, comma-separated, or "-"
# Keys and sensitive columns are read as factors (their codes are what sdcMicro's C++ sees).

suppressMessages(library(sdcMicro))
args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 3) stop("usage: sdcmicro_risk.R DATA OUT KEYS [WEIGHT] [HOUSEHOLD] [SENSITIVE]")
option <- function(i) if (length(args) >= i && args[[i]] != "-") args[[i]] else NULL
out <- args[[2]]
dir.create(out, showWarnings = FALSE, recursive = TRUE)
if (args[[1]] == "testdata") {
  data(testdata, package = "sdcMicro")
  data <- testdata
} else {
  data <- read.csv(args[[1]], na.strings = c("?", ""), check.names = FALSE,
                   stringsAsFactors = FALSE)
}
# freqCalc evaluates conditions built from the column names: names such as Adult's
# "marital-status" become syntactic ones ("marital.status"), in data.csv too
names(data) <- make.names(names(data))
write.csv(data, file.path(out, "data.csv"), row.names = FALSE, na = "")
keys <- make.names(strsplit(args[[3]], ",")[[1]])
weight <- if (is.null(option(4))) NULL else make.names(option(4))
household <- if (is.null(option(5))) NULL else make.names(option(5))
sensitive <- if (is.null(option(6))) character(0) else make.names(strsplit(option(6), ",")[[1]])
for (name in c(keys, sensitive)) data[[name]] <- factor(data[[name]])

seconds <- function(expr) {
  start <- proc.time()[["elapsed"]]
  value <- force(expr)
  list(value = value, seconds = proc.time()[["elapsed"]] - start)
}

risk <- seconds(measure_risk(data, keyVars = keys, w = weight, hid = household))
suda <- seconds(suda2(data, variables = keys, DisFraction = 0.01))
res <- risk$value$Res
records <- data.frame(fk = res[, "fk"], Fk = res[, "Fk"], risk = res[, "risk"])
if (!is.null(household)) records$household_risk <- res[, "hier_risk"]
records$suda_score <- suda$value$score
records$dis_score <- suda$value$disScore
contributions <- as.matrix(suda$value$contributionPercent)
for (j in seq_along(keys)) records[[paste0("contribution_", keys[[j]])]] <- contributions[, j]

summary <- list(
  n = nrow(data),
  global_risk = risk$value$global_risk,
  global_risk_percent = risk$value$global_risk_pct,
  expected_reidentifications = risk$value$global_risk_ER,
  measure_risk_seconds = risk$seconds,
  suda2_seconds = suda$seconds
)
if (!is.null(household)) {
  summary$household_expected_reidentifications <- risk$value$hier_risk_ER
  summary$household_global_risk <- risk$value$hier_risk
}
for (row in seq_len(nrow(suda$value$attribute_contributions))) {
  entry <- suda$value$attribute_contributions[row, ]
  summary[[paste0("suda_contribution_", entry$variable)]] <- entry$contribution
}

# kAnon_violations takes an sdcMicroObj; its counts are sum(fk < k) and sum(Fk < k) over the
# object's risk$individual, which measure_risk computes as above.
sdc <- createSdcObj(data, keyVars = keys, weightVar = weight, hhId = household)
for (k in c(2, 3, 5)) {
  summary[[paste0("violations_", k)]] <- kAnon_violations(sdc, weighted = FALSE, k = k)
  if (!is.null(weight)) {
    summary[[paste0("weighted_violations_", k)]] <- kAnon_violations(sdc, weighted = TRUE, k = k)
  }
}

for (name in sensitive) {
  ldiv <- seconds(ldiversity(data, keyVars = keys, ldiv_index = name))
  for (measure in c("Distinct", "Entropy", "Recursive")) {
    records[[paste0("l_", tolower(measure), "_", name)]] <-
      as.numeric(ldiv$value[, paste0(name, "_", measure, "_Ldiversity")])
  }
  summary[[paste0("ldiversity_seconds_", name)]] <- ldiv$seconds
}

codes <- sapply(keys, function(name) as.numeric(data[[name]]))
codes[is.na(codes)] <- -999
write.csv(codes, file.path(out, "codes.csv"), row.names = FALSE)
write.csv(records, file.path(out, "records.csv"), row.names = FALSE)
write.csv(data.frame(name = names(summary), value = unlist(summary)),
          file.path(out, "summary.csv"), row.names = FALSE)
cat(sprintf("sdcMicro %s: %d records written to %s\n", packageVersion("sdcMicro"), nrow(data),
            out))
