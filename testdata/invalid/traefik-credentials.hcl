project = "edge"

traefik "v2" {
  api = "http://admin:hunter2@127.0.0.1:8081" # ERROR: Credentials in a spec
  url = "http://127.0.0.1:8000"
}
