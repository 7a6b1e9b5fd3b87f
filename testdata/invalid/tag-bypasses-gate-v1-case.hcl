project = "edge"

service "api" { # ERROR: Tag would bypass the gate
  port = 8080
  tags = ["traefik.Frontend.Rule=PathPrefix:/"]
  frontend {
    rule = "Path:/api"
    forward_auth {
      address = "http://127.0.0.1:8080/auth"
    }
  }
}
