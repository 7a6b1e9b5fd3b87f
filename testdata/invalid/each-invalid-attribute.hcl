project = "edge"

service "api" {
  for_each = { a = 8080 }
  port     = each.port # ERROR: Invalid each reference
}
