# Two SSD nodes (instance-store NVMe) and one HDD node (st1), terminated after 12 hours.
provider "aws" {
  region = "eu-central-1"
}

module "testbed" {
  source = "../.."

  name                 = "lsm-nightly"
  region               = "eu-central-1"
  controller_cidr      = "203.0.113.7/32"
  ssh_public_key_file  = "~/.ssh/lsmbench.pub"
  ssh_private_key_file = "~/.ssh/lsmbench"
  ssd_nodes            = 2
  hdd_nodes            = 1
  expiry_hours         = 12
}

output "inventory" {
  description = "The nodes, for lsmbench."
  value       = module.testbed.inventory
}
