# Area A: the application serves /api and /auth; Traefik claims /api and asks
# /auth first, with the client's X-Auth-Token.

service "gated-api" {
  id      = "gated-api-1"
  address = var.api_host
  port    = var.api_port
  meta = {
    team = "edge"
  }

  frontend {
    rule        = "Path:/api"
    entrypoints = ["web"]

    forward_auth {
      address               = "http://${var.api_host}:${var.api_port}/auth"
      auth_response_headers = ["X-Auth-User"]
    }
  }

  check "health" {
    http     = "http://${var.api_host}:${var.api_port}/healthz"
    interval = "10s"
    timeout  = "2s"
  }
}
