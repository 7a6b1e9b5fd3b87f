project = "edge"

service "api" { # ERROR: Invalid service ID
  for_each = { "bad\tkey" = 8080, good = 8081 }
  port     = each.value
}
