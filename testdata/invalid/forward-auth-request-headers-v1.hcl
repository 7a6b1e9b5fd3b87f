project = "edge"

proxy {
  dialect = "traefik-v1"
}

service "api" {
  port = 8080
  frontend {
    rule = "Path:/api"
    forward_auth { # ERROR: Forward-auth option Traefik 1 lacks # WARNING: Gated frontend written for one Traefik generation
      address              = "http://127.0.0.1:8080/auth"
      auth_request_headers = ["X-Auth-Token"]
    }
  }
}
