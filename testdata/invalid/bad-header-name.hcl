project = "edge"

service "api" {
  port = 8080
  frontend {
    rule = "Path:/api"
    forward_auth {
      address               = "http://127.0.0.1:8080/auth"
      auth_response_headers = ["X Auth User"] # ERROR: Invalid header name
    }
  }
}
