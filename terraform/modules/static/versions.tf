terraform {
  # terraform_data (built in) and optional object attributes need 1.4+.
  required_version = ">= 1.4.0, < 2.0.0"
}
