project = "edge"

traefik "v2" {
  api = "ftp://127.0.0.1:8081" # ERROR: Invalid traefik URL
  url = "http://127.0.0.1:8000"
}
