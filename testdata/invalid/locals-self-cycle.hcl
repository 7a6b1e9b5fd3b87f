project = "edge"

locals {
  port = local.port + 1 # ERROR: Cycle in local values
}

service "api" {
  port = local.port
}
