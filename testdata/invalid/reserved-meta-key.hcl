project = "edge"

service "api" {
  port = 8080
  meta = { managed-by = "me" } # ERROR: Invalid meta key
}
