project = "edge"

service "api" {
  address = local.host # ERROR: Unknown reference
  port    = 8080
}
