project = "edge"

# The default dialect writes auth_request_headers for Traefik 2 and 3;
# Traefik 1.7 has no such option, which is said.
service "api" {
  port = 8080
  frontend {
    rule = "Path:/api"
    forward_auth { # WARNING: Traefik 1 sends every header to the auth endpoint
      address              = "http://127.0.0.1:8080/auth"
      auth_request_headers = ["X-Auth-Token"]
    }
  }
}
