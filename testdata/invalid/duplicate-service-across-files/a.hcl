project = "edge"

service "api" {
  port = 8080
}
