project = "edge"

service "api" {
  port = 8080
  frontend {
    rule = "Path:/api"
    forward_auth { # WARNING: The auth endpoint trusts the client's X-Forwarded headers
      address              = "http://127.0.0.1:8080/auth"
      trust_forward_header = true
    }
  }
}
