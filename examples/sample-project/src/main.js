import { temperatureFor } from "./weather.js";

const readings = { Lisbon: 19, Oslo: 3 };
console.log(`Lisbon: ${temperatureFor("Lisbon", readings)} °C`);
