project = "edge"

locals {
  paths = { a = "/a", b = "/b" }
}

service "app" {
  for_each = local.paths
  port     = 8080
  frontend { # ERROR: Frontends differ within one service name
    rule = "Path:${each.value}"
  }
}
