project = "edge"

service "api" {
  port = 8080
  frontend {
    rule = "Path:/api"
    forward_auth { # ERROR: Missing required argument
      auth_response_headers = ["X-Auth-User"]
    }
  }
}
