// Returns the temperature in °C for a city, or throws if the city is unknown.
export function temperatureFor(city, readings) {
  // TODO: look the city up in `readings` and handle the unknown case.
}
