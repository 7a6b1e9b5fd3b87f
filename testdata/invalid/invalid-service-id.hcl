project = "edge"

service "api" {
  id   = "api\n1" # ERROR: Invalid service ID
  port = 8080
}
