project = "edge"

traefik "v2" { # ERROR: Missing required argument
  api = "http://127.0.0.1:8081"
}
