# sdcMicro's targeted record swapping (recordSwap) for reproduction/sdcmicro_recordswap.py
# and benchmarks/bench_swap.py.
#
# Usage:
#   Rscript sdcmicro_recordswap.R create HOUSEHOLDS SEED OUT.csv
#       sdcMicro's synthetic census, createDat(HOUSEHOLDS) after set.seed(SEED)
#   Rscript sdcmicro_recordswap.R swap IN.csv OUTDIR HIERARCHY RISKVARS SIMILAR RATE K
#       SEEDS [CARRY]
#       for each seed (comma-separated): OUTDIR/pairs_SEED.csv (hid, hid_swapped: each
#       household and the one it took its geography from), OUTDIR/levels.csv (hid, the
#       first level at risk by sdcMicro's own setRisk/setLevels, 0-based; the number of
#       levels when none) and OUTDIR/times.csv (seed, seconds of recordSwap)
suppressMessages({
  library(sdcMicro)
  library(data.table)
})
args <- commandArgs(trailingOnly = TRUE)
split <- function(x) if (is.na(x) || x == "") character(0) else strsplit(x, ",")[[1]]

if (args[1] == "create") {
  set.seed(as.integer(args[3]))
  fwrite(createDat(as.integer(args[2])), args[4])
} else if (args[1] == "swap") {
  data <- fread(args[2])
  out <- args[3]
  hierarchy <- split(args[4])
  risk_variables <- split(args[5])
  similar <- list(split(args[6]))
  rate <- as.numeric(args[7])
  k <- as.integer(args[8])
  seeds <- as.integer(split(args[9]))
  carry <- if (length(args) >= 10) split(args[10]) else NULL
  if (length(carry) == 0) carry <- NULL
  setkey(data, hid)
  cols <- c("hid", hierarchy, risk_variables)
  rows <- transpose(data[, ..cols])
  nh <- length(hierarchy)
  risk <- sdcMicro:::setRisk_cpp(rows, seq_len(nh), nh + seq_along(risk_variables), 0L)
  level <- sdcMicro:::setLevels_cpp(risk, if (k == 0) 2 else 1 / k)
  fwrite(unique(data.table(hid = data$hid, level = level)), file.path(out, "levels.csv"))
  times <- data.table(seed = seeds, seconds = NA_real_)
  for (i in seq_along(seeds)) {
    log <- file.path(out, paste0("log_", seeds[i], ".txt"))
    started <- proc.time()[["elapsed"]]
    swapped <- suppressMessages(recordSwap(
      data = data, hid = "hid", hierarchy = hierarchy, similar = similar, swaprate = rate,
      k_anonymity = k, risk_variables = risk_variables, carry_along = carry,
      return_swapped_id = TRUE, log_file_name = log, seed = seeds[i]))
    times$seconds[i] <- proc.time()[["elapsed"]] - started
    fwrite(unique(swapped[, .(hid, hid_swapped)]),
           file.path(out, paste0("pairs_", seeds[i], ".csv")))
    fwrite(swapped, file.path(out, paste0("swapped_", seeds[i], ".csv")))
  }
  fwrite(times, file.path(out, "times.csv"))
} else {
  stop("usage: sdcmicro_recordswap.R create|swap ...")
}
