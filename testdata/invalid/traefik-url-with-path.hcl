project = "edge"

traefik "v2" {
  api = "http://127.0.0.1:8081"
  url = "http://127.0.0.1:8000/api" # ERROR: Invalid traefik URL
}
