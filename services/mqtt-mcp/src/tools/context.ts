import type { Config } from '../config';
import type { MqttHub } from '../hub';

/** What the tools need: the MQTT hub and the configuration. */
export interface ToolDeps {
  hub: MqttHub;
  config: Config;
}
