project = "edge"

locals {
  host = "127.0.0.1"
}

service "api" {
  address = local.hots # ERROR: Reference to undeclared local value
  port    = 8080
}
