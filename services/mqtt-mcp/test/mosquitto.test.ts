import { backendUrl, describeWithBackend } from '@mcp-fleet/testing';
import { behaviourSuite } from './shared';

describeWithBackend('mqtt', 'mqtt-mcp on the machine Mosquitto (MQTT 5)', () => {
  behaviourSuite(() => ({ MQTT_URL: backendUrl('mqtt'), MQTT_PROTOCOL_VERSION: 5 }));
});
