project = "edge"

service "api" {
  port = 8080
  frontend {
    rule = "Path:/api"
    forward_auth { # WARNING: The auth endpoint's certificate is not checked
      address = "https://127.0.0.1:8443/auth"
      tls {
        insecure_skip_verify = true
      }
    }
  }
}
