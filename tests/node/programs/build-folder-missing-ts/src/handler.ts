export const handler = async (event: { Records: { s3: { object: { key: string } } }[] }) => {
    return event.Records.map((record) => record.s3.object.key);
};
