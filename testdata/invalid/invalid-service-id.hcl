project = "edge"

service "api" {
  id   = "api/1" # ERROR: Invalid service ID
  port = 8080
}
