project = "edge"

service "api" {
  port = 8080
  frontend {
    rule = "Path:/api"
    forward_auth {
      address = "ftp://127.0.0.1/auth" # ERROR: Invalid forward-auth address
    }
  }
}
