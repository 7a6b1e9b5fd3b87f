project = "edge"

service "api" { # ERROR: Invalid service ID
  for_each = { "bad key" = 8080, good = 8081 }
  port     = each.value
}
