project = "edge"

proxy {
  dialect = "traefik-v1"
}

service "api" {
  port = 8080
  frontend {
    rule = "Path:/api"
    forward_auth { # WARNING: Gated frontend written for one Traefik generation
      address = "http://127.0.0.1:8080/auth"
    }
  }
}
