project = "edge"

service "api" {
  name = "" # ERROR: Invalid service name
  port = 8080
}
