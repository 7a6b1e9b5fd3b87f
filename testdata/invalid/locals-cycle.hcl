project = "edge"

locals {
  a = "${local.b}-x" # ERROR: Cycle in local values
  b = local.c        # ERROR: Cycle in local values
  c = local.a        # ERROR: Cycle in local values
}

service "api" {
  address = local.a
  port    = 8080
}
