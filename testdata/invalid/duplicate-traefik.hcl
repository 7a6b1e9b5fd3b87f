project = "edge"

traefik "v2" {
  api = "http://127.0.0.1:8081"
  url = "http://127.0.0.1:8000"
}

traefik "v2" { # ERROR: Duplicate traefik block
  api = "http://127.0.0.1:8082"
  url = "http://127.0.0.1:8001"
}
