# sdcMicro's invariant PRAM matrix on a variable of its testdata, for
# reproduction/sdcmicro_pram.py: the random diagonal sdcMicro draws (runif(L, pd, 1), the
# first draw after set.seed), the marginal it uses, and the matrix Rs it applies.
#
# Usage: Rscript reproduction/sdcmicro_pram.R VARIABLE PD ALPHA SEED OUT.json
suppressMessages({
  library(sdcMicro)
  library(jsonlite)
})
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 5) stop("usage: sdcmicro_pram.R VARIABLE PD ALPHA SEED OUT.json")
variable <- args[1]
pd <- as.numeric(args[2])
alpha <- as.numeric(args[3])
seed <- as.integer(args[4])
data(testdata, package = "sdcMicro", envir = environment())
x <- data.frame(v = factor(testdata[[variable]]))
set.seed(seed)
result <- pram(x, variables = "v", pd = pd, alpha = alpha)
set.seed(seed)
pds <- stats::runif(nlevels(x$v), min = pd, max = 1)  # calcTransitionMatrix's first draw
Rs <- attr(result, "pram_params")$v$Rs
writeLines(toJSON(list(
  sdcmicro = as.character(packageVersion("sdcMicro")), variable = variable,
  levels = levels(x$v), counts = as.vector(table(x$v)), pd = pd, alpha = alpha,
  pds = pds, matrix = unname(lapply(seq_len(nrow(Rs)), function(i) Rs[i, ]))
), auto_unbox = TRUE, digits = NA), args[5])
