project = "edge"

service "api" {
  for_each = { a = 8080, b = 8081 }
  id       = "api" # ERROR: Duplicate instance ID
  port     = each.value
}
