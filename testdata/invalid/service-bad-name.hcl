project = "edge"

service "api" {
  name = "my api" # ERROR: Invalid service name
  port = 8080
}
