project = "edge"

service "api" {
  for_each = toset([8080, 8081]) # ERROR: Invalid for_each argument
  port     = each.value
}
