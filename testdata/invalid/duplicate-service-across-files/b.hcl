service "api" { # ERROR: Duplicate service ID
  port = 8081
}
