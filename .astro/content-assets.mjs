export default new Map([]);
