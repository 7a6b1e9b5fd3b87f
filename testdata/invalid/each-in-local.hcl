project = "edge"

locals {
  id = "api-${each.key}" # ERROR: Reference to "each" in a block without for_each
}

service "api" {
  for_each = { a = 8080 }
  id       = local.id
  port     = each.value
}
