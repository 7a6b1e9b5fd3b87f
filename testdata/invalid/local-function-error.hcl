project = "edge"

locals {
  settings = jsondecode("{") # ERROR: Error in function call
}

service "api" {
  port = local.settings.port
}
