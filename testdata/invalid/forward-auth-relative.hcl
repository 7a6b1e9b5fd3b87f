project = "edge"

service "api" {
  port = 8080
  frontend {
    rule = "Path:/api"
    forward_auth {
      address = "/auth" # ERROR: Invalid forward-auth address
    }
  }
}
