project = "edge"

proxy {
  dialect = "nginx" # ERROR: Unsupported proxy dialect
}
