project = "edge"

service "api" {
  address = data.host # ERROR: Unknown reference
  port    = 8080
}
