project = "edge"

service "api" {
  port = 8080
}

service "api-2" {
  id   = "api" # ERROR: Duplicate service ID
  port = 8081
}
