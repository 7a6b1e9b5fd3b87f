project = "edge"

service "api" {
  port = 8080
  frontend {
    rule = "Path:/api"
  }
  frontend { # ERROR: Duplicate frontend block
    rule = "Path:/v2"
  }
}
