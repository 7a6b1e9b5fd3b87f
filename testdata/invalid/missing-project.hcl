# ERROR: Missing project
service "api" {
  port = 8080
}
