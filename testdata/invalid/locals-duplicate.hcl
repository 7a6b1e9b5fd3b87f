project = "edge"

locals {
  host = "127.0.0.1"
}

locals {
  host = "10.0.0.1" # ERROR: Duplicate local value
}

service "api" {
  address = local.host
  port    = 8080
}
